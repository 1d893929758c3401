using System.Linq.Expressions;

namespace Jackdaw.Client.Queries.Linq;

// GroupBy(x => x.Company) or GroupBy(x => new { x.Company, x.Employee }), then a Select of the
// key, its members, Count() and Sum(...): RQL's 'group by ... select key() as Key, count() as
// Count, sum(Freight) as Total', answered by an auto map-reduce index.
internal static partial class QueryTranslator
{
    private sealed partial class Translation
    {
        // The group-by paths by the key's member name ("" for a single key); null until GroupBy.
        private List<(string Member, FieldPath Path)>? _groupKeys;

        private void GroupBy(MethodCallExpression call)
        {
            if (call.Arguments.Count != 2)
            {
                throw new NotSupportedException("GroupBy with an element or result selector or a comparer cannot be translated; group by a key (x => x.Company) and Select the totals.");
            }

            if (_groupKeys is not null)
            {
                throw new NotSupportedException("A second GroupBy cannot be translated: RQL groups once. Group by a composite key (x => new { x.Company, x.Employee }).");
            }

            RequireBeforePagingAndSelect("GroupBy", "it would group one page of results, or the projected values");
            _groupKeys = Translate(Lambda(call, "GroupBy"), lambda => lambda.Body switch
            {
                NewExpression { Members: { } members } created => created.Arguments
                    .Select((argument, i) => (members[i].Name.StartsWith("get_", StringComparison.Ordinal) ? members[i].Name[4..] : members[i].Name, fields.Resolve(argument, "GroupBy")))
                    .ToList(),
                var body => [("", fields.Resolve(body, "GroupBy"))],
            });
            model.GroupBy.AddRange(_groupKeys.Select(k => k.Path.ToRql()));
        }

        private Projection GroupProjection(LambdaExpression lambda, Projection projection)
        {
            switch (lambda.Body)
            {
                case NewExpression created:
                    AddConstructorArguments(projection, created);
                    return projection;
                case MemberInitExpression initialized:
                    AddConstructorArguments(projection, initialized.NewExpression);
                    foreach (var binding in initialized.Bindings)
                    {
                        if (binding is not MemberAssignment assignment)
                        {
                            throw new NotSupportedException($"Select: the member binding '{binding}' cannot be translated; assign each member the key or a total (Count = g.Count()).");
                        }

                        AddGroupItem(projection, fields.JsonName(initialized.Type, assignment.Member), assignment.Expression);
                    }

                    return projection;
                default:
                    // One value per group (g => g.Key, g => g.Count()): read from the result's field of that name.
                    const string single = "Value";
                    AddGroupItem(projection, single, lambda.Body);
                    projection.SingleField = single;
                    return projection;
            }
        }

        /// <summary>One select item of a group-by query: the key, one of its members, Count() or Sum(...).</summary>
        private void AddGroupItem(Projection projection, string alias, Expression value)
        {
            var name = new System.Text.StringBuilder();
            Rql.AppendName(name, alias);
            projection.GroupItems.Add(GroupItem(value) + " as " + name);
        }

        private string GroupItem(Expression value)
        {
            switch (StripConvert(value))
            {
                case MemberExpression { Member.Name: "Key", Expression: ParameterExpression }:
                    if (_groupKeys!.Count > 1)
                    {
                        throw new NotSupportedException("Select: a composite key is selected member by member (Company = g.Key.Company), not whole.");
                    }

                    return "key()";
                case MemberExpression { Expression: MemberExpression { Member.Name: "Key", Expression: ParameterExpression } } member:
                    var key = _groupKeys!.FirstOrDefault(k => k.Member == member.Member.Name);
                    return key.Path is not null
                        ? key.Path.ToRql()
                        : throw new NotSupportedException($"Select: '{member}' is not a member of the group key.");
                case MethodCallExpression { Method.Name: nameof(Enumerable.Count) or nameof(Enumerable.LongCount), Arguments.Count: 1 } call when call.Method.DeclaringType == typeof(Enumerable):
                    return "count()";
                case MethodCallExpression { Method.Name: nameof(Enumerable.Sum), Arguments.Count: 2 } call when call.Method.DeclaringType == typeof(Enumerable):
                    var selector = FieldPathResolver.StripQuote(call.Arguments[1]) as LambdaExpression
                        ?? throw new NotSupportedException($"Select: '{call}' must sum a field (g.Sum(x => x.Freight)).");
                    return "sum(" + Translate(selector, l => fields.Resolve(l.Body, "Sum")).ToRql() + ")";
                default:
                    throw new NotSupportedException($"Select: '{value}' cannot be translated in a group-by query; select the key (g.Key, g.Key.Company), g.Count() and g.Sum(x => x.Field).");
            }
        }

        private static Expression StripConvert(Expression expression) =>
            expression is UnaryExpression { NodeType: ExpressionType.Convert or ExpressionType.ConvertChecked } unary ? StripConvert(unary.Operand) : expression;

        private void RequireNotGrouped(string what)
        {
            if (_groupKeys is not null)
            {
                throw new NotSupportedException($"{what} after GroupBy cannot be translated yet; write the group-by query in RQL (from Orders group by Company where Count > 5 select ...).");
            }
        }
    }
}
