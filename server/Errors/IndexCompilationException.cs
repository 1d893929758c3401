namespace Jackdaw.Server.Errors;

/// <summary>
/// An index definition that cannot be compiled: a JavaScript syntax error, a map that is not
/// <c>map('Collection', fn)</c>, a field option that does not exist. The message names the index,
/// the map and, for script errors, the line and column within that map.
/// </summary>
public sealed class IndexCompilationException : Exception
{
    public IndexCompilationException(string indexName, string problem, int? line = null, int? column = null, Exception? innerException = null)
        : base(Describe(indexName, problem, line, column), innerException)
    {
        IndexName = indexName;
        Line = line;
        Column = column;
    }

    public string IndexName { get; }

    /// <summary>The 1-based line within the map's text, when the problem is in the script.</summary>
    public int? Line { get; }

    /// <summary>The 1-based column within that line.</summary>
    public int? Column { get; }

    private static string Describe(string indexName, string problem, int? line, int? column) =>
        line is null
            ? $"Index '{indexName}' cannot be compiled: {problem}"
            : $"Index '{indexName}' cannot be compiled (line {line}, column {column}): {problem}";
}
