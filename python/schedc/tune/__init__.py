"""schedc tune: prepare (compile candidate kernel configs per dispatch) and bench (time and
check them on the GPU); merge keeps the winners in a kernel database."""
