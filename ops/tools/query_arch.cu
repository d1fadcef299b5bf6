/*
 * query_arch.cu - prints the compute capability of the first visible GPU as "90" (for 9.0),
 * read from the driver through the CUDA runtime; host code only, so it builds and runs
 * without knowing the GPU. Exit 0: found; 3: no CUDA driver; 4: no device; 5: other error
 * (a driver older than the toolkit, say), with a one-line reason on stdout.
 */
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
	int drv = 0, rt = 0, n = 0, major = 0, minor = 0;
	if (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0) {
		printf("no CUDA driver found\n");
		return 3;
	}
	cudaRuntimeGetVersion(&rt);
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
		printf("no CUDA device found\n");
		return 4;
	}
	if (e == cudaErrorInsufficientDriver) {
		printf("the driver supports CUDA %d.%d, older than the toolkit's runtime %d.%d\n",
		       drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
		return 5;
	}
	if (e != cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
	    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess) {
		printf("cannot query the GPU: %s\n", cudaGetErrorString(e ? e : cudaGetLastError()));
		return 5;
	}
	printf("%d%d\n", major, minor);
	return 0;
}
