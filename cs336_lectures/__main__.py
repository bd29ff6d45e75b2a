from cs336_lectures.cli import main

raise SystemExit(main())
