namespace Jackdaw.Server.Errors;

/// <summary>One line of a streamed request is larger than the server accepts (a bulk insert's line, <c>Limits:MaxDocumentBodySize</c>).</summary>
public sealed class PayloadTooLargeException : Exception
{
    public PayloadTooLargeException(string message)
        : base(message)
    {
    }
}
