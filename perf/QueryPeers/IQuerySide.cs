internal interface IQuerySide
{
    string Name { get; }

    /// <summary>Runs one query for <paramref name="company"/>; returns how many orders came back.</summary>
    Task<int> QueryAsync(string company);
}
