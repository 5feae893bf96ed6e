"""The adversary tests share two helper modules that live next to them (not test files)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
