"""A 1-D Jacobi relaxation in plain mpi4py: the program the halo tutorial ports.

    pgas run -n 2 docs/examples/halo_mpi4py.py      (or: mpiexec -n 2 python ...)
"""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n, sweeps = 1000, 100

# my share of the n points, plus one ghost cell at each end
counts = [n // size + (r < n % size) for r in range(size)]
start = sum(counts[:rank])
u = np.zeros(counts[rank] + 2)
u[1:-1] = np.sin(np.linspace(0, np.pi, n))[start:start + counts[rank]]
left = rank - 1 if rank > 0 else MPI.PROC_NULL
right = rank + 1 if rank < size - 1 else MPI.PROC_NULL

for sweep in range(sweeps):
    # halo exchange: send my edge values, receive the neighbours' into the ghost cells
    comm.Sendrecv(u[1:2], dest=left, recvbuf=u[-1:], source=right)
    comm.Sendrecv(u[-2:-1], dest=right, recvbuf=u[0:1], source=left)
    new = u.copy()
    new[1:-1] = 0.5 * (u[:-2] + u[2:])
    if rank == 0:
        new[1] = u[1]                      # the global end points stay fixed
    if rank == size - 1:
        new[-2] = u[-2]
    u = new

# gather the pieces to check against NumPy
whole = np.concatenate(comm.allgather(u[1:-1]))
G = np.sin(np.linspace(0, np.pi, n))
for sweep in range(sweeps):
    G[1:-1] = 0.5 * (G[:-2] + G[2:])
ok = np.allclose(whole, G)
if rank == 0:
    print(f"mpi4py: {size} ranks, u[{n // 2}] = {whole[n // 2]:.6f}, matches NumPy: {ok}")
if not ok:
    raise SystemExit("halo_mpi4py.py: differs from NumPy")
