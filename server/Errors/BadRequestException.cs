namespace Jackdaw.Server.Errors;

/// <summary>A request is malformed: a bad id or name, a missing parameter, a body of the wrong shape. The message says what was wrong and how to send it right.</summary>
public sealed class BadRequestException : Exception
{
    public BadRequestException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
