namespace Jackdaw.Server.Errors;

/// <summary>A request, or one line of a streamed request, is larger than the server accepts (<c>--max-body-size</c>).</summary>
public sealed class PayloadTooLargeException : Exception
{
    public PayloadTooLargeException(string message)
        : base(message)
    {
    }
}
