"""Building blocks every stage uses: argument checks, array kernels, identifier keys, display."""
