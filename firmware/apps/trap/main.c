/*
 * trap: executes an illegal instruction on core 0, to check that a crash is reported and ends
 * the program instead of hanging it.
 */
int main(void)
{
	__asm__ volatile(".word 0x00000000");
	return 0;
}
