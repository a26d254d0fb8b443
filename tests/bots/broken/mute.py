"""Never says ready: reads its input and answers nothing."""

import sys

for _ in sys.stdin:
    pass
