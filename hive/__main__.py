from hive.cli import main

raise SystemExit(main())
