from nbcli.cli.app import run

run()
