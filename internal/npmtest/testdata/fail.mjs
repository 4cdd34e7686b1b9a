// Writes a line to stderr and exits 3.
process.stderr.write("the probe failed on purpose\n");
process.exit(3);
