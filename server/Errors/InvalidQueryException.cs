namespace Jackdaw.Server.Errors;

/// <summary>
/// A query that is not valid RQL (or asks more than a query may): the message names the position
/// (offset, line and column) and what was expected there.
/// </summary>
public sealed class InvalidQueryException : Exception
{
    public InvalidQueryException(string query, int position, string problem)
        : base(Describe(query, position, problem))
    {
        Position = position;
    }

    /// <summary>The offset in the query text where the problem is.</summary>
    public int Position { get; }

    private static string Describe(string query, int position, string problem)
    {
        position = Math.Clamp(position, 0, query.Length);
        var line = 1;
        var column = 1;
        for (var i = 0; i < position; i++)
        {
            if (query[i] == '\n')
            {
                line++;
                column = 1;
            }
            else
            {
                column++;
            }
        }
        return $"Invalid query at position {position} (line {line}, column {column}): {problem}";
    }
}
