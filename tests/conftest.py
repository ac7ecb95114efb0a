import pytest
import torch

# One thread: results are bit-identical only at a fixed thread count, and on a busy
# two-core machine two threads can be many times slower than one.
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    """Every test starts from the same random state, so failures reproduce."""
    torch.manual_seed(0)
