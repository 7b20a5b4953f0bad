import os
import sys

# The fake model server lives beside the tests (tests/fake_model/), not in the package.
sys.path.insert(0, os.path.dirname(__file__))
