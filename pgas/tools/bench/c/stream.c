/* A minimal STREAM (McCalpin) for one process: copy, scale, add, triad on
 * double arrays of N elements, best of NTIMES trials (the first dropped).
 * Usage: stream N NTIMES.  Prints one JSON object: best seconds per kernel
 * and the check of the final values.  Compiled and run by pgas.tools.bench.stream
 * as the C reference, one process per locale. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <math.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: stream N NTIMES\n"); return 2; }
    long n = atol(argv[1]);
    int ntimes = atoi(argv[2]);
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
    if (!a || !b || !c || ntimes < 2) { fprintf(stderr, "stream: bad size or out of memory\n"); return 2; }
    const double s = 3.0;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (long j = 0; j < n; j++) { a[j] = 1.0; b[j] = 2.0; c[j] = 0.0; }
    for (int k = 0; k < ntimes; k++) {
        double t[5];
        t[0] = now();
        for (long j = 0; j < n; j++) c[j] = a[j];
        t[1] = now();
        for (long j = 0; j < n; j++) b[j] = s * c[j];
        t[2] = now();
        for (long j = 0; j < n; j++) c[j] = a[j] + b[j];
        t[3] = now();
        for (long j = 0; j < n; j++) a[j] = b[j] + s * c[j];
        t[4] = now();
        if (k > 0)
            for (int i = 0; i < 4; i++)
                if (t[i + 1] - t[i] < best[i]) best[i] = t[i + 1] - t[i];
    }
    double aj = 1.0, bj = 2.0, cj = 0.0;
    for (int k = 0; k < ntimes; k++) { cj = aj; bj = s * cj; cj = aj + bj; aj = bj + s * cj; }
    long bad = 0;
    for (long j = 0; j < n; j++)
        bad += fabs(a[j] - aj) > 1e-13 * fabs(aj) || fabs(b[j] - bj) > 1e-13 * fabs(bj) || fabs(c[j] - cj) > 1e-13 * fabs(cj);
    printf("{\"n\": %ld, \"copy\": %.9e, \"scale\": %.9e, \"add\": %.9e, \"triad\": %.9e, \"errors\": %ld}\n",
           n, best[0], best[1], best[2], best[3], bad);
    return bad != 0;
}
