import sys

from flows.interfaces.service.server import main

sys.exit(main())
