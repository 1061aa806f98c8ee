from kenning.cli.main import main

main()
