namespace Jackdaw.Server.Errors;

/// <summary>
/// An analyzer definition that cannot be built (RavenDB's name for the error): an empty or invalid
/// name, a <c>Code</c> that is neither a built-in analyzer's name nor a description of Lucene parts
/// Jackdaw allows, an unknown part or argument, an argument out of bounds. The message names the
/// analyzer, what was wrong and what is allowed.
/// </summary>
public sealed class AnalyzerCompilationException : Exception
{
    public AnalyzerCompilationException(string? analyzerName, string problem, Exception? innerException = null)
        : base(string.IsNullOrEmpty(analyzerName) ? "The analyzer cannot be built: " + problem : $"Analyzer '{analyzerName}' cannot be built: {problem}", innerException)
    {
        AnalyzerName = analyzerName;
    }

    public string? AnalyzerName { get; }
}
