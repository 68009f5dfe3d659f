/*
 * The parts of the shared-memory implementations ("flags" and "queue", subutai/chan.h) that
 * have nothing to do: their ends need no port, so connecting and closing one touch no hardware.
 * Compiled with every implementation, empty unless the build's is one of these.
 */
#if defined(SUBUTAI_CHAN_IMPL_FLAGS) || defined(SUBUTAI_CHAN_IMPL_QUEUE)

#include "chan_impl.h"

int chan_impl_connect(subutai_chan_t *ch, enum subutai_chan_role role, unsigned int slot,
		      unsigned int peer_tile, unsigned int peer_slot)
{
	(void)ch, (void)role, (void)slot, (void)peer_tile, (void)peer_slot;
	return 0;
}

void chan_impl_close(enum subutai_chan_role role, unsigned int slot)
{
	(void)role, (void)slot;
}

#endif /* SUBUTAI_CHAN_IMPL_FLAGS || SUBUTAI_CHAN_IMPL_QUEUE */
