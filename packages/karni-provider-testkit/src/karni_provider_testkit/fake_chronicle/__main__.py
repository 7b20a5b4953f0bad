"""``python -m karni_provider_testkit.fake_chronicle ARGS``: run the double as ``chronicle``."""

import sys

from karni_provider_testkit.fake_chronicle.program import main

sys.exit(main())
