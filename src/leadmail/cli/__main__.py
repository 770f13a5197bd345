import sys

from leadmail.cli import main

sys.exit(main())
