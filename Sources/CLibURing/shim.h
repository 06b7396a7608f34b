// liburing, found through pkg-config (`liburing.pc`); only CRinglet's C files use it.
#include <liburing.h>
