import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_shared import as_root  # noqa: E402,F401  (a fixture: pytest finds it by name)

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')


