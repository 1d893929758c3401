namespace Jackdaw.Client.Queries;

/// <summary>The values a query's text refers to as <c>$p0</c>, <c>$p1</c>, ...: none is ever written into the text itself.</summary>
internal sealed class QueryParameterList
{
    private readonly List<KeyValuePair<string, object?>> _values = [];

    public IReadOnlyList<KeyValuePair<string, object?>> Values => _values;

    /// <summary>Adds a value and returns how the text names it (<c>$p3</c>).</summary>
    public string Add(object? value)
    {
        var name = "p" + _values.Count.ToString(System.Globalization.CultureInfo.InvariantCulture);
        _values.Add(new(name, value));
        return "$" + name;
    }
}
