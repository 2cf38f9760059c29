package cas

// Refused reports whether the server refused the request as it stands
// (400, 404, 409, 422, or an error event, which the hub marks as one that
// a retry would not pass, in a streamed answer whose status was 200):
// sending the same again fails again. The pipeline uses it to tell a
// shard the hub will not register (it names a xorb the hub does not have)
// from a failure to reach the hub.
func (e *HTTPError) Refused() bool {
	switch e.Status {
	case statusOK, statusBadRequest, statusNotFound, 409, 422:
		return true
	}
	return false
}
