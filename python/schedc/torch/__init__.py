"""The torch front end: importer (torch-mlir import of a model), training (one training step
through aot_autograd), dynamo (the torch.compile backend)."""
