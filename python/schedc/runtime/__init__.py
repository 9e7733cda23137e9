"""Running compiled modules through IREE's HAL drivers: module (load, Module, Function), interop
(DLPack and torch tensors), vmfb (archive checks). Needs only iree-base-runtime and numpy."""
