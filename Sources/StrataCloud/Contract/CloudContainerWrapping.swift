/// A container that forwards to another (a test's interceptor, a fault injector): what the
/// engine derives from the container underneath — which mock cloud a device is on, say —
/// it derives through the wrapper.
package protocol CloudContainerWrapping: CloudContainer {
    /// The container this one forwards to.
    var wrappedContainer: any CloudContainer { get }
}

extension CloudContainer {
    /// The innermost container under any ``CloudContainerWrapping`` layers.
    package var innermostContainer: any CloudContainer {
        var current: any CloudContainer = self
        while let wrapper = current as? any CloudContainerWrapping { current = wrapper.wrappedContainer }
        return current
    }
}
