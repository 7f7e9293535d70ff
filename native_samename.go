package main

// native_samename.go says which listed devices share a name. Metro names a
// device only by its name: an Android device by its model, which every
// emulator of one system image shares; a simulator by its name, which two
// simulators of two runtimes may share. When another listed device of the
// platform has a device's name, a Metro page of that name could be either's,
// and the device's apps are never joined to it (session_sameapp.go); the
// health check says so (tool_health_native.go).

import "slices"

// sameNameDevices lists the ids of the listed devices other than dev that
// have its platform and name, sorted; none when dev has no name or is gone.
func sameNameDevices(devices []nativeDeviceStatus, dev nativeDeviceStatus) []string {
	var ids []string
	for _, d := range devices {
		if dev.Name != "" && dev.State != "gone" && d.State != "gone" && d.Platform == dev.Platform && d.ID != dev.ID && d.Name == dev.Name {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// sameNameAs is sameNameDevices among the devices listed now.
func (f *nativeFollower) sameNameAs(platform, id, name string) []string {
	f.mu.Lock()
	devices := make([]nativeDeviceStatus, 0, len(f.devices))
	for _, dev := range f.devices {
		devices = append(devices, dev.status())
	}
	f.mu.Unlock()
	return sameNameDevices(devices, nativeDeviceStatus{Platform: platform, ID: id, Name: name})
}
