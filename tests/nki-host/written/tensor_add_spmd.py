# An SPMD tensor add in the style of the NKI getting-started guide: a 2-D
# launch grid, each program one 128 x 512 tile, indices from nl.mgrid.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_tiles(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    offset_i_x = nl.program_id(0) * 128
    offset_i_y = nl.program_id(1) * 512
    ix, iy = nl.mgrid[0:128, 0:512]
    a_tile = nl.load(a_input[offset_i_x + ix, offset_i_y + iy])
    b_tile = nl.load(b_input[offset_i_x + ix, offset_i_y + iy])
    c_tile = a_tile + b_tile  # Python's operators work on tiles
    nl.store(c_output[offset_i_x + ix, offset_i_y + iy], value=c_tile)
    return c_output


def run(rng):
    a = rng.standard_normal((256, 1024), dtype=np.float32)
    b = rng.standard_normal((256, 1024), dtype=np.float32)
    return add_tiles[2, 2](a, b), a + b
