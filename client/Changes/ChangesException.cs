namespace Jackdaw.Client;

/// <summary>
/// An error the changes feed's server sent: a refused command (<see cref="ErrorCode"/>
/// <c>InvalidCommand</c>), or why it closed the connection (<c>TooSlow</c>, <c>MessageTooBig</c>).
/// </summary>
public sealed class ChangesException(string message, string? errorCode) : JackdawException(message)
{
    /// <summary>The server's <c>Error</c> code, e.g. <c>TooSlow</c>; null when it sent none.</summary>
    public string? ErrorCode { get; } = errorCode;
}
