//go:build darwin && cgo

package app

/*
#include <mach/mach.h>

// h3_resident is the task's resident size, what ps and the rusage peak
// count (Metal buffers in unified memory included once touched).
static unsigned long long h3_resident(void) {
	mach_task_basic_info_data_t info;
	mach_msg_type_number_t n = MACH_TASK_BASIC_INFO_COUNT;
	if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, (task_info_t)&info, &n) != KERN_SUCCESS) {
		return 0;
	}
	return info.resident_size;
}
*/
import "C"

// residentBytes is the task's resident size from Mach.
func residentBytes() int64 { return int64(C.h3_resident()) }
