from nbcli.cli.app import main

main()
