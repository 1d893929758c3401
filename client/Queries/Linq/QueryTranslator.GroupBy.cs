using System.Linq.Expressions;

namespace Jackdaw.Client.Queries.Linq;

// GroupBy(x => x.Company) or GroupBy(x => new { x.Company, x.Employee }), then a Select of the
// key, its members, Count() and Sum(...): RQL's 'group by ... select key() as Key, count() as
// Count, sum(Freight) as Total', answered by an auto map-reduce index. A Where or ordering after
// the Select names its members ('where Count > $p0 order by Total as double desc'), which the
// server maps to the result fields; a Where before GroupBy may only test group-by fields.
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
            if (model.OrderBy.Count > 0)
            {
                throw new NotSupportedException("OrderBy before GroupBy cannot be translated: RQL orders the groups, not the documents. Order the results after the Select (.Select(g => new { g.Key, Total = g.Sum(x => x.Freight) }).OrderByDescending(r => r.Total)).");
            }

            _groupKeys = Translate(Lambda(call, "GroupBy"), lambda => lambda.Body switch
            {
                NewExpression { Members: { } members } created => created.Arguments
                    .Select((argument, i) => (members[i].Name.StartsWith("get_", StringComparison.Ordinal) ? members[i].Name[4..] : members[i].Name, fields.Resolve(argument, "GroupBy")))
                    .ToList(),
                var body => [("", fields.Resolve(body, "GroupBy"))],
            });
            model.GroupBy.AddRange(_groupKeys.Select(k => k.Path.ToRql()));

            // RavenDB's client puts a Where before GroupBy into the query's one 'where', which the
            // server applies to the groups. That filters the same as on the documents only when it
            // tests group-by fields; on any other field it would test a group's total of that name,
            // or be refused, so it is refused here, before any request.
            foreach (var (path, what, expression) in _documentFields)
            {
                if (!model.GroupBy.Contains(path.ToRql()))
                {
                    throw new NotSupportedException($"{what} before GroupBy: '{expression}' reads {path.ToRql()}, which is not a group-by field. RQL's where applies to the groups (as RavenDB's client sends it), so a filter before GroupBy may only test the group-by fields ({string.Join(", ", model.GroupBy)}); filter on the totals with a Where after the Select.");
                }
            }
        }

        // The document fields each Where or Search before GroupBy reads, checked by GroupBy.
        private readonly List<(FieldPath Path, string What, Expression Expression)> _documentFields = [];

        /// <summary>Notes the document fields a filter's lambda reads, in case a GroupBy follows.</summary>
        private void NoteDocumentFields(LambdaExpression lambda, string what)
        {
            if (_groupKeys is null)
            {
                new DocumentFieldCollector(fields, path => _documentFields.Add((path, what, lambda))).Visit(lambda.Body);
            }
        }

        /// <summary>
        /// Whether a Where or an ordering applies to the results of a group-by query: after its
        /// Select and before Skip and Take, naming the Select's members, which the server maps to
        /// the aliases it gave the key and the totals. Between GroupBy and Select it is refused.
        /// </summary>
        private bool OnGroupResults(string what, string why)
        {
            if (_groupKeys is null)
            {
                return false;
            }

            if (!_projected)
            {
                throw new NotSupportedException($"{what} between GroupBy and its Select cannot be translated; put it after the Select, naming the Select's members (.Select(g => new {{ g.Key, Count = g.Count() }}).{what}(r => r.Count ...)).");
            }

            if (_paged)
            {
                throw new NotSupportedException($"{what} after Skip or Take cannot be translated: {why}. Put it before Skip and Take.");
            }

            return true;
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
                    _resultRoot = FieldPath.Root.Append(single);
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
                throw new NotSupportedException($"{what} after GroupBy cannot be translated: RQL's search reads documents, and a group-by query answers groups. Search before GroupBy, on a group-by field.");
            }
        }
    }
}
