/* cuda_probe.c - lists the CUDA devices and runs a self-test kernel on each,
   or prints "no CUDA device: <reason>" and exits 0.

       nvcc -O2 -I. -o build/doppler_cuda_probe demos/cuda_probe.c doppler_cuda.cu -lpthread

   Plain C: it calls doppler_cuda.cu only through the C ABI declared in
   doppler.h (>>api-cuda), and provides the library's implementation that
   doppler_cuda.cu links against (DOPPLER_IMPLEMENTATION).
   Exit status: 0 (devices fine, or none), 1 when a self-test fails. */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <stdio.h>

int main(void)
{
    dp_error err = {0};
    int n = 0, failed = 0;
    if (dp_cuda_device_count(&n, &err)) {
        printf("no CUDA device: %s\n", err.msg);
        return 0;
    }
    if (n == 0) {
        printf("no CUDA device: the CUDA runtime reports 0 devices\n");
        return 0;
    }
    printf("%d CUDA device%s\n", n, n == 1 ? "" : "s");
    for (int d = 0; d < n; d++) {
        dp_cuda_info info;
        double secs = 0;
        if (dp_cuda_device_info(d, &info, &err)) {
            printf("  %d: %s\n", d, err.msg);
            failed = 1;
            continue;
        }
        printf("  %d: %s, compute capability %d.%d, %d SMs, %.1f GiB (%.1f GiB free)\n", d,
               info.name, info.major, info.minor, info.multiprocessors,
               info.total_bytes / (1 << 30), info.free_bytes / (1 << 30));
        if (dp_cuda_selftest(d, 1 << 20, &secs, &err)) {
            printf("     self-test FAILED: %s\n", err.msg);
            failed = 1;
        } else {
            printf("     self-test ok (axpy over 2^20 doubles in %.3f ms)\n", secs * 1e3);
        }
    }
    return failed;
}
