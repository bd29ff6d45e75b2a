from cs336_lectures.runtime.cli.main import main

raise SystemExit(main())
