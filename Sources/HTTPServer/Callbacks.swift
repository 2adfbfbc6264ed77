import CMicroHTTPD
import CShims

// libmicrohttpd's callbacks. C cannot capture, so `cls` carries the
// ServerCore and `*con_cls` the request's RequestContext (both Unmanaged).

/// URI-log callback: a request line has arrived. Creates the request's
/// context, retained until the request-completed callback.
let uriLogCallback: keyward_mhd_uri_log_callback = { cls, uri, connection in
    guard let cls, let connection else { return nil }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let target = uri.map { String(cString: $0) } ?? ""
    // After the copy: libmicrohttpd is left an empty query, so it stores no arguments in its pool.
    keyward_mhd_drop_query_arguments(uri)
    core.activeRequests.add(1, ordering: .relaxed)
    let context = RequestContext(
        core: core, connection: connection, socket: keyward_mhd_connection_fd(connection), target: target)
    let registry = ThreadHeadRequests.current
    registry.insert(context)
    context.headRegistry = registry
    return Unmanaged.passRetained(context).toOpaque()
}

/// Request-completed callback: the last time libmicrohttpd mentions this request.
let requestCompletedCallback: MHD_RequestCompletedCallback = { _, _, contextSlot, termination in
    guard let contextSlot, let opaque = contextSlot.pointee else { return }
    contextSlot.pointee = nil
    let context = Unmanaged<RequestContext>.fromOpaque(opaque).takeRetainedValue()
    context.complete(cleanly: termination == .REQUEST_TERMINATED_COMPLETED_OK)
    context.core.activeRequests.subtract(1, ordering: .relaxed)
}

/// Access handler: called once when the head is parsed, once per body
/// fragment, once when the body is complete, and again after each resume.
let accessHandlerCallback: MHD_AccessHandlerCallback = {
    _, _, _, method, version, uploadData, uploadDataSize, contextSlot in
    guard let contextSlot, let opaque = contextSlot.pointee, let uploadDataSize else { return .NO }
    let context = Unmanaged<RequestContext>.fromOpaque(opaque).takeUnretainedValue()
    return context.access(method: method, version: version, uploadData: uploadData, uploadDataSize: uploadDataSize)
}
