namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// How the results of a query with <c>Select</c> are read. The RQL <c>select</c> names each
/// field with the JSON name of the member it fills. The id is not selected: the server sends it as
/// every result's <c>@metadata.@id</c>, and it is copied into the member that asked for it.
/// </summary>
internal sealed class Projection
{
    /// <summary>The <c>select</c> list: each document path and the name it gets in the result.</summary>
    public List<(FieldPath Path, string Alias)> Fields { get; } = [];

    /// <summary>The JSON name of the member that takes the document id, if one does.</summary>
    public string? IdAlias { get; set; }

    /// <summary>
    /// For <c>Select(x => x.Company)</c>: the result is that one field's value, named so in each
    /// answer object, rather than an object. <see cref="SingleIsId"/> when it is the id.
    /// </summary>
    public string? SingleField { get; set; }

    public bool SingleIsId { get; set; }

    /// <summary>
    /// The select items of a group-by query, as RQL (<c>key() as Key</c>, <c>count() as Count</c>,
    /// <c>sum(Freight) as Total</c>); each result is read whole into the projection's type.
    /// </summary>
    public List<string> GroupItems { get; } = [];

    /// <summary>The <c>select</c> clause without the keyword, e.g. <c>Company, ShipTo.City as City</c>; empty when only the id is asked for.</summary>
    public string ToRql()
    {
        var builder = new System.Text.StringBuilder();
        builder.AppendJoin(", ", GroupItems);
        foreach (var (path, alias) in Fields)
        {
            if (builder.Length > 0)
            {
                builder.Append(", ");
            }

            var text = path.ToRql();
            builder.Append(text);
            if (text != alias)
            {
                builder.Append(" as ");
                Rql.AppendName(builder, alias);
            }
        }

        return builder.ToString();
    }
}
