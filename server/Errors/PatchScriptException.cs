namespace Jackdaw.Server.Errors;

/// <summary>
/// A patch script threw, or ran past a limit of its sandbox (its error <c>Type</c> is RavenDB's <c>JavaScriptException</c>):
/// the message names the document, the problem and the line of the script. Nothing the script did is stored.
/// </summary>
public sealed class PatchScriptException : Exception
{
    public PatchScriptException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
