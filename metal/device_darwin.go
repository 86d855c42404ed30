//go:build darwin && cgo

package metal

/*
#cgo CFLAGS: -x objective-c -fobjc-arc
#cgo LDFLAGS: -framework Metal -framework Foundation
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#import <Metal/Metal.h>

typedef struct {
	char name[128];
	uint64_t working_set;
	uint64_t max_buffer;
	bool unified;
	int family;
	bool metal3;
	int max_tg_mem;
	bool ok;
} h3_metal_device;

static h3_metal_device h3_metal_detect(void) {
	h3_metal_device d;
	memset(&d, 0, sizeof d);
	@autoreleasepool {
		id<MTLDevice> dev = MTLCreateSystemDefaultDevice();
		if (dev == nil) {
			return d;
		}
		d.ok = true;
		strncpy(d.name, [[dev name] UTF8String], sizeof d.name - 1);
		d.working_set = [dev recommendedMaxWorkingSetSize];
		d.max_buffer = [dev maxBufferLength];
		d.unified = [dev hasUnifiedMemory];
		d.max_tg_mem = (int)[dev maxThreadgroupMemoryLength];
		// MTLGPUFamilyApple1 is 1001; probe downwards from Apple10
		for (int f = 10; f >= 1; f--) {
			if ([dev supportsFamily:(MTLGPUFamily)(1000 + f)]) {
				d.family = f;
				break;
			}
		}
		d.metal3 = [dev supportsFamily:(MTLGPUFamily)5001];
	}
	return d;
}
*/
import "C"

// Detect returns the default Metal device's capabilities.
func Detect() (Device, error) {
	d := C.h3_metal_detect()
	if !bool(d.ok) {
		return Device{}, ErrNoDevice
	}
	dev := Device{
		Name:                  C.GoString(&d.name[0]),
		RecommendedWorkingSet: uint64(d.working_set),
		MaxBufferLength:       uint64(d.max_buffer),
		UnifiedMemory:         bool(d.unified),
		Family:                int(d.family),
		Metal3:                bool(d.metal3),
		MaxThreadgroupMemory:  int(d.max_tg_mem),
	}
	dev.BF16 = dev.Metal3 || dev.Family >= 6
	return dev, nil
}
