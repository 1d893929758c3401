using System.Net;

namespace Jackdaw.Client;

/// <summary>
/// A secured server refused the request (its <c>AuthorizationException</c>): 401 when no client
/// certificate was presented (set <see cref="DocumentStore.Certificate"/>), 403 when the certificate is
/// not registered, expired or not yet valid, or lacks the clearance or the database access the request
/// needs. <see cref="Exception.Message"/> is the server's, naming which (and the database and the
/// access the certificate has). Nothing of the request was run.
/// </summary>
public sealed class AuthorizationException(string message, HttpStatusCode? statusCode = HttpStatusCode.Forbidden, string? serverErrorType = ErrorTypes.Authorization)
    : JackdawException(message, statusCode, serverErrorType);
