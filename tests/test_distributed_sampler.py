"""DistributedSampler against torch's: identical index lists for every rank, epoch and option."""

import itertools

import pytest
import torch
import torch.utils.data.distributed as tdistributed

import glassgrad
import glassgrad.utils.data as gdata
from glassgrad.utils.data.distributed import DistributedSampler


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


CASES = list(itertools.product([0, 1, 5, 10, 11, 13, 100], [1, 2, 3, 4, 7, 16],
                               [True, False], [False, True]))


@pytest.mark.parametrize("n,replicas,shuffle,drop_last", CASES)
def test_indices_are_torchs(n, replicas, shuffle, drop_last):
    data = Sized(n)
    for rank in sorted({0, replicas // 2, replicas - 1}):
        ours = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle,
                                  seed=3, drop_last=drop_last)
        theirs = tdistributed.DistributedSampler(data, num_replicas=replicas, rank=rank,
                                                 shuffle=shuffle, seed=3, drop_last=drop_last)
        assert (len(ours), ours.total_size) == (len(theirs), theirs.total_size)
        for epoch in (0, 1, 5):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs), (rank, epoch)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (12, 4, False),
                                                  (7, 2, True)])
def test_an_epoch_is_split_exactly(n, replicas, drop_last):
    shares = [list(DistributedSampler(Sized(n), replicas, r, seed=1, drop_last=drop_last))
              for r in range(replicas)]
    everything = sorted(i for share in shares for i in share)
    if drop_last:
        assert len(set(everything)) == len(everything) == (n // replicas) * replicas
    else:
        assert set(everything) == set(range(n))
        assert len(everything) == -(-n // replicas) * replicas
    assert len({len(s) for s in shares}) == 1


def test_errors_are_torchs():
    for rank in (-1, 3):
        with pytest.raises(ValueError) as theirs:
            tdistributed.DistributedSampler(Sized(4), num_replicas=3, rank=rank)
        with pytest.raises(ValueError) as ours:
            DistributedSampler(Sized(4), num_replicas=3, rank=rank)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs:
        tdistributed.DistributedSampler(Sized(4))
    with pytest.raises(ValueError) as ours:
        DistributedSampler(Sized(4))
    assert str(ours.value) == str(theirs.value)


def test_with_the_dataloader_as_torch():
    x = list(range(23))
    ours = gdata.DataLoader(gdata.TensorDataset(glassgrad.tensor(x)), batch_size=4,
                            sampler=gdata.DistributedSampler(Sized(23), 2, 1, seed=9))
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(x)), batch_size=4,
        sampler=torch.utils.data.DistributedSampler(Sized(23), 2, 1, seed=9))
    assert [b[0].tolist() for b in ours] == [b[0].tolist() for b in theirs]
