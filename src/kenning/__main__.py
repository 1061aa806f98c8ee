from kenning.cli.entry import main

main()
