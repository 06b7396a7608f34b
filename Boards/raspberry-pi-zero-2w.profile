# Raspberry Pi Zero 2 W: BCM2710A1, 4 x Cortex-A53 at 1 GHz, 512 MB.
# Placeholder for `make cross`/`make sim` until the profiles branch lands; the key
# names are the ones that branch uses.
board = raspberry-pi-zero-2w
crossTarget = aarch64-unknown-linux-gnu
qemuMachine = virt
qemuCPU = cortex-a53
cores = 4
qemuMemory = 512M
memoryMegabytes = 512
