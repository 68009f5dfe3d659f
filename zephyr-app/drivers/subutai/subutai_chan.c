/*
 * Channel port driver for Zephyr: the waits of channels (subutai/chan.h) without holding the core.
 *
 * On bare metal a receive is a load that waits on the bus for the message and a send to a full
 * channel a store that waits for the credit: the core has nothing else to run. Under Zephyr the
 * core's other threads must run meanwhile, so the port's subutai_port_chan_sleep() (the channel
 * wait of subutai/port.h, include/subutai_port.h) calls subutai_chan_sleep() when the bit it needs
 * in the port's STATUS (a slot full, a credit back) is clear: the thread spins for
 * CONFIG_SUBUTAI_REPLY_SPIN_CYCLES, as the synchronization waits do (a message that comes within
 * it costs no context switch), then sets its bits in the port's IRQ_MASK and sleeps on a semaphore
 * that the port's interrupt gives. The handler masks the bits it found set (the interrupt is a
 * level) and wakes their threads; each end of a channel belongs to one thread, so a bit has one
 * waiter at a time.
 */
#define DT_DRV_COMPAT subutai_chan

#include <zephyr/device.h>
#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/util.h>

#include <subutai/chan_port.h>
#include <subutai/soc.h>

LOG_MODULE_REGISTER(subutai_chan, CONFIG_SUBUTAI_NI_LOG_LEVEL);

BUILD_ASSERT(DT_INST_IRQN(0) == CHAN_INTERRUPT, "the devicetree's channel port is the SoC's");
BUILD_ASSERT(DT_INST_REG_ADDR_BY_NAME(0, window) == TILE_CHAN_BASE,
	     "the devicetree's channel window is the SoC's");

struct subutai_chan_data {
	/* The semaphore of the thread waiting on each STATUS bit (kernel data: the core's own). */
	struct k_sem *waiters[32];
	/* IRQ_MASK as last written (the register reads as 0). */
	uint32_t irq_mask;
};

static struct subutai_chan_data chan_data;

static void subutai_chan_isr(const void *arg)
{
	struct subutai_chan_data *data = (struct subutai_chan_data *)arg;
	uint32_t fired = subutai_chan_port_status() & data->irq_mask;

	data->irq_mask &= ~fired;
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_IRQ_MASK) = data->irq_mask;
	while (fired != 0) {
		unsigned int bit = __builtin_ctz(fired);

		fired &= fired - 1;
		if (data->waiters[bit] != NULL) {
			k_sem_give(data->waiters[bit]);
		}
	}
}

void subutai_chan_sleep(uint32_t bits)
{
	struct subutai_chan_data *data = &chan_data;
	uint32_t start = subutai_cycles32();

	while (subutai_cycles32() - start < CONFIG_SUBUTAI_REPLY_SPIN_CYCLES) {
		if (subutai_chan_port_status() & bits) {
			return;
		}
	}
	struct k_sem sem;

	k_sem_init(&sem, 0, 1);
	unsigned int key = irq_lock();

	for (uint32_t b = bits; b != 0; b &= b - 1) {
		data->waiters[__builtin_ctz(b)] = &sem;
	}
	/* Set after registering: the interrupt, if the bit is already set, comes at the unlock. */
	data->irq_mask |= bits;
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_IRQ_MASK) = data->irq_mask;
	irq_unlock(key);
	k_sem_take(&sem, K_FOREVER);
	key = irq_lock();
	data->irq_mask &= ~bits;
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_IRQ_MASK) = data->irq_mask;
	for (uint32_t b = bits; b != 0; b &= b - 1) {
		data->waiters[__builtin_ctz(b)] = NULL;
	}
	irq_unlock(key);
}

static int subutai_chan_init(const struct device *dev)
{
	ARG_UNUSED(dev);
	chan_data.irq_mask = 0;
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_IRQ_MASK) = 0;
	chan_ev_enable_write(1u << CSR_CHAN_EV_ENABLE_RX_OFFSET);
	IRQ_CONNECT(DT_INST_IRQN(0), DT_INST_IRQ(0, priority), subutai_chan_isr, &chan_data, 0);
	irq_enable(DT_INST_IRQN(0));
	return 0;
}

DEVICE_DT_INST_DEFINE(0, subutai_chan_init, NULL, &chan_data, NULL, POST_KERNEL,
		      CONFIG_KERNEL_INIT_PRIORITY_DEVICE, NULL);
