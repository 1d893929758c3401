namespace Jackdaw.Server.Errors;

/// <summary>
/// A request refused by the server's security: no client certificate (<see cref="NotAuthenticated"/>,
/// a 401), or one that is unknown, not valid now, or without the access the request needs (a 403).
/// The message names which, and never anything the caller may not see.
/// </summary>
public sealed class AuthorizationException(bool notAuthenticated, string message) : Exception(message)
{
    public bool NotAuthenticated { get; } = notAuthenticated;
}
