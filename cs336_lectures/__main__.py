from cs336_lectures.runtime.cli import main

raise SystemExit(main())
