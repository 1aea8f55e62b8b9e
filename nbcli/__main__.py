from nbcli.cli.entry import run

try:
    run()
finally:
    # Under `python -m`, an interruption that ended inside code run by
    # exec() of a string (dataclasses, namedtuple and the like build their
    # methods so, during imports) leaves a flag that makes the interpreter
    # end by SIGINT after the exit code was chosen; a string run to its end
    # clears it.
    exec("")
