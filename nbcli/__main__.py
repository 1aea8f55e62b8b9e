from nbcli.cli.entry import run

run()
